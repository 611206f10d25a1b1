"""What people read and dashboards scrape: the HTML report and its charts, `explain`/`worst`,
Prometheus exposition and the metric history, and flat documents for Kibana."""

__all__ = ["charts", "explain", "monitoring", "report", "results"]
