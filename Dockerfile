# The console's image, for docker-compose.yml: the runtime dependencies only, run by a user of its own.
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app
RUN useradd --system --home-dir /app --shell /usr/sbin/nologin console
COPY pyproject.toml constraints.txt manage.py ./
COPY console console
COPY approvals approvals
COPY templates templates
COPY static static
# Editable, so that the code runs from /app, beside the templates and static files settings.py finds
# from its own path. Static files need no collectstatic: the console serves them itself.
RUN pip install -c constraints.txt -e . \
    && mkdir -p /app/var \
    && chown console /app/var
USER console
EXPOSE 8000
CMD ["daphne", "-b", "0.0.0.0", "-p", "8000", "--proxy-headers", "console.asgi:application"]
