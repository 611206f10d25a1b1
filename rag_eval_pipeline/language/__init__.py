"""Languages: which one a text is in, and how text of each is segmented, stemmed and normalised."""
