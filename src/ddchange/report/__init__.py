"""Renderers over one Result: the text summary, JSON, the HTML page, and the test log."""
