"""Human review: queues of cases for people to label, their labels read back, and the labels as
a judge's measure (``metrics/agreement.py``)."""
