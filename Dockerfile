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
CMD ["daphne", "-b", "0.0.0.0", "-p", "8000", "--proxy-headers", "console.asgi:application"]
