# The console's image, for docker-compose.yml: the runtime dependencies only, run by a user of its own.
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app
# bubblewrap sandboxes stdio servers where the runtime allows user namespaces; mcp-stdio (STDIO_USER) runs them.
RUN apt-get update \
    && apt-get install -y --no-install-recommends bubblewrap \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --home-dir /app --shell /usr/sbin/nologin console \
    && useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin mcp-stdio
COPY pyproject.toml constraints.txt manage.py ./
COPY console console
COPY approvals approvals
COPY templates templates
COPY static static
# Editable, so that the code runs from /app, beside the templates and static files settings.py finds
# from its own path. Static files need no collectstatic: the console serves them itself.
RUN pip install -c constraints.txt -e . \
    && mkdir -p /app/var \
    && chown console /app/var \
    && chmod 700 /app/var
USER console
EXPOSE 8000
# One worker a container (the recipe scales by replicas); the client's address from nginx: TRUSTED_PROXIES.
CMD ["granian", "--interface", "asgi", "--workers", "1", "--loop", "uvloop", "--backpressure", "10000", \
     "--workers-kill-timeout", "5", "--no-access-log", "--log-level", "warning", \
     "--log-config", "console/granian_logging.json", \
     "--host", "0.0.0.0", "--port", "8000", "console.asgi:application"]
