# syntax=docker/dockerfile:1
# Build a wheel, install it with the locked runtime dependencies (requirements.lock, exported from
# uv.lock by `make lock`, every file checked against its hash) into a venv,
# ship the venv on a slim runtime as a non-root user.
#
# The base image is pinned to a Python patch release; pin its digest too when you publish
# (`docker buildx imagetools inspect python:3.11.14-slim-bookworm` prints it):
#   docker build --build-arg PYTHON_IMAGE=python:3.11.14-slim-bookworm@sha256:<digest> .
# Multi-arch: docker buildx build --platform linux/amd64,linux/arm64 (docs/install.md).
# Without a Docker daemon, `make release` builds the equivalent image with debootstrap and
# buildah (tools/build-image.sh; docs/release.md has the two side by side): keep them in step.
ARG PYTHON_IMAGE=python:3.11.14-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
WORKDIR /src
RUN python -m pip install --no-cache-dir build==1.*
COPY pyproject.toml README.md LICENSE requirements.lock ./
COPY function ./function
COPY platform ./platform
RUN python -m build --wheel --outdir /dist \
 && python -m venv /venv \
 && /venv/bin/pip install --no-cache-dir --require-hashes -r requirements.lock \
 && /venv/bin/pip install --no-cache-dir --no-deps /dist/*.whl \
 && /venv/bin/pip check

FROM ${PYTHON_IMAGE} AS runtime
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
