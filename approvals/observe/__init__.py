"""What operations teams see of the console: Prometheus metrics (metrics) and structured logs (logs).

Infrastructure: it imports nothing of the console's domain, so that any layer may count or log here.
"""
