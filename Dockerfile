# syntax=docker/dockerfile:1
#
# locklab in containers (docs/k6.md, "Docker"). Two images from one file:
#
#   docker build -t locklab .                  # the server (the default, last stage)
#   docker build -t locklab-k6 --target k6 .   # the pinned k6 with the scripts and the .proto
#
# Base images are pinned by tag; pin them by digest (image@sha256:…) where
# builds must be byte-for-byte reproducible.

ARG GO_IMAGE=golang:1.26-bookworm
ARG RUN_IMAGE=gcr.io/distroless/static-debian12:nonroot

# ---- build the server -------------------------------------------------------
FROM ${GO_IMAGE} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -o /out/locklab .

# ---- build k6 at the version pinned in tools/go.mod (no prebuilt download) ---
FROM ${GO_IMAGE} AS k6-build
WORKDIR /src/tools
COPY tools/go.mod tools/go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -o /out/k6 go.k6.io/k6

# ---- k6 with the scripts: docker build --target k6 ---------------------------
FROM ${RUN_IMAGE} AS k6
COPY --from=k6-build /out/k6 /usr/bin/k6
WORKDIR /locklab
# The scripts load proto/ relative to k6/lib/, so keep the repository layout.
COPY testingscript.js ./
COPY k6/ ./k6/
COPY proto/locklab/v1/locklab.proto ./proto/locklab/v1/
# No network but the server's: no usage report to Grafana.
ENV K6_NO_USAGE_REPORT=true
ENTRYPOINT ["/usr/bin/k6"]
CMD ["run", "testingscript.js"]

# ---- the server (default target) ---------------------------------------------
FROM ${RUN_IMAGE} AS server
COPY --from=build /out/locklab /usr/bin/locklab
EXPOSE 50055
# The server listens on 127.0.0.1 unless told otherwise. Inside a container
# that loopback is the container's own, unreachable through a published port
# or from another container, so the image listens on every interface.
# Overriding CMD replaces all of it: repeat -addr 0.0.0.0:50055.
ENTRYPOINT ["/usr/bin/locklab"]
CMD ["-mode", "inputQ", "-addr", "0.0.0.0:50055"]
