# syntax=docker/dockerfile:1
# Build:  docker build --build-arg VERSION=0.2.0 --build-arg COMMIT="$(git rev-parse HEAD)" -t hap-reconciler:0.2.0 .
# (.git stays out of the build context, so the commit comes in as an argument.)
# Without Docker, `make image` (hack/build-image.sh, buildah) builds the same
# layout from scratch: /hap-reconciler as the entrypoint, the CA bundle at
# /etc/ssl/certs/ca-certificates.crt, user 65532:65532, /tmp, no shell,
# GODEBUG=fips140=only,tlsmlkem=0.

ARG GO_VERSION=1.26

# The builder runs on the build machine's platform and cross-compiles, so a
# multi-platform build needs no emulation.
FROM --platform=$BUILDPLATFORM golang:${GO_VERSION}-bookworm AS build
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=dev
ARG COMMIT=
WORKDIR /src
# Modules first: this layer stays cached while only the sources change.
COPY go.mod go.sum ./
# The read path KEB imports is a module of its own, replaced from this tree.
COPY provisioning/go.mod provisioning/
RUN --mount=type=cache,target=/go/pkg/mod \
    go mod download
COPY . .
# Static binary (no libc in the runtime image), no local paths in it, the
# Go FIPS 140-3 module, and the version and commit `hap-reconciler --version`
# prints.
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOFIPS140=v1.0.0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags="-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" \
      -o /out/hap-reconciler ./cmd/hap-reconciler

# No shell, no package manager, a non-root user by default: distroless's
# nonroot, given by number as the chart's runAsUser/runAsGroup are.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/hap-reconciler /hap-reconciler
USER 65532:65532
# FIPS-only: every algorithm from the FIPS 140-3 module, and no hybrid
# post-quantum key exchange in TLS (not an approved algorithm).
ENV GODEBUG=fips140=only,tlsmlkem=0
ENTRYPOINT ["/hap-reconciler"]
