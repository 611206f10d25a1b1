"""What every layer shares and nothing else: the masking of secrets in what is stored, logged,
traced or printed, and whether a process of this machine still runs."""
