# syntax=docker/dockerfile:1
# Build a wheel, install it into a venv, ship the venv on a slim runtime as a non-root user.
FROM python:3.11-slim-bookworm AS build
WORKDIR /src
RUN python -m pip install --no-cache-dir --upgrade pip build
COPY pyproject.toml README.md ./
COPY function ./function
COPY platform ./platform
RUN python -m build --wheel --outdir /dist \
 && python -m venv /venv \
 && /venv/bin/pip install --no-cache-dir /dist/*.whl

FROM python:3.11-slim-bookworm AS runtime
RUN useradd --uid 65532 --no-create-home --shell /usr/sbin/nologin function
COPY --from=build /venv /venv
ENV PATH="/venv/bin:$PATH" \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
USER 65532:65532
EXPOSE 9443
# Crossplane mounts the mTLS certificates and sets TLS_SERVER_CERTS_DIR (read by --tls-certs-dir);
# TLS stays on by default: --insecure is for local `crossplane render` only.
ENTRYPOINT ["function-platform"]
CMD ["--address=0.0.0.0:9443"]
