# Container image of rocketns: bin/namesrv and bin/nsadmin, static, on a distroless base, run as uid 3000.
#
# Build:  make image   (docker build --build-arg VERSION=$(git describe --tags --always --dirty) -t rocketns:<version> .)
# Run:    docker run -p 9876:9876 -p 127.0.0.1:9877:9877 -v rocketns-data:/var/lib/rocketns rocketns:dev
# A standalone RocketMQ 5.x controller node from the same image: `rocketns:dev controller -c
# /etc/rocketns/controller.properties` (deploy/docker/controller.properties says how to run a group of three).
#
# Why distroless/static rather than debian-slim: the binaries are static (CGO_ENABLED=0: netpoll and sonic
# need no cgo; sonic's run-time code generation is pure Go, and on other architectures it falls back to
# encoding/json), so the runtime needs no libc. distroless/static is about 2 MB with CA certificates, tzdata
# and /etc/passwd, and has no shell or package manager for an attacker to use. The price is no shell for debugging: use
# `docker exec <c> nsadmin clusterList` (NAMESRV_ADDR is preset), or an ephemeral debug container.
#
# Configuration: the properties file /etc/rocketns/namesrv.properties (a default is baked in; mount your own
# over it), then ROCKETNS_* environment variables (the key in upper snake case: ROCKETNS_LOG_LEVEL=debug,
# ROCKETNS_TLS_SERVER_MODE=enforcing), then `--set key=value` arguments, each overriding the one before:
#   docker run -e ROCKETNS_LOG_LEVEL=debug rocketns:dev
#   docker run rocketns:dev -c /etc/rocketns/namesrv.properties --set listenPort=9876
# (arguments replace CMD, so repeat -c). See docs/operations.md, "Packaging".

ARG GO_VERSION=1.26

FROM golang:${GO_VERSION} AS build
WORKDIR /src
# Module downloads get their own layer, rebuilt only when go.mod or go.sum change.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG TARGETOS=linux
ARG TARGETARCH
# The version --version, the start-up banner and rocketns_build_info report: `make image` passes
# `git describe --tags --always --dirty`. .git is not in the build context (see .dockerignore), so the
# toolchain cannot find it itself (hence -buildvcs=false); without the argument the image says "devel".
ARG VERSION=devel
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} \
    go build -trimpath -buildvcs=false \
        -ldflags="-s -w -X github.com/rocketns/rocketns/core/buildinfo.version=${VERSION}" \
        -o /out/bin/ ./cmd/namesrv ./cmd/nsadmin
# distroless has no mkdir or chown: the state directory is made here, and COPY --from keeps its owner and
# mode (a named volume mounted there starts with them too).
RUN mkdir -p /out/rootfs/var/lib/rocketns && chown 3000:3000 /out/rootfs/var/lib/rocketns && \
    chmod 0700 /out/rootfs/var/lib/rocketns

FROM gcr.io/distroless/static-debian12
# Pin the base by digest in a real pipeline (gcr.io/distroless/static-debian12@sha256:...).
ARG VERSION=devel
LABEL org.opencontainers.image.title="rocketns" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.description="RocketMQ NameServer in Go, wire-compatible with the Java mqnamesrv" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=build /out/bin/namesrv /out/bin/nsadmin /usr/local/bin/
COPY deploy/docker/namesrv.properties /etc/rocketns/namesrv.properties
COPY deploy/docker/controller.properties /etc/rocketns/controller.properties
COPY --from=build /out/rootfs/ /
# The KV store (kvConfig.json) lives here; HOME too, so nothing falls back to a path outside the volume.
ENV HOME=/var/lib/rocketns \
    NAMESRV_ADDR=127.0.0.1:9876
VOLUME ["/var/lib/rocketns"]
# uid/gid 3000, like the Apache RocketMQ image. Numeric, so Kubernetes' runAsNonRoot can verify it.
USER 3000:3000
WORKDIR /var/lib/rocketns
# 9876: remoting (brokers, clients, admin tools). 9877: adminListen (/healthz, /readyz, /metrics, the status
# page, /rocketmq/nsaddr; no authentication): publish it on the host's loopback or a monitoring network only.
# A controller node: 9878 (brokers' controller requests and raft), 9879 (its adminListen).
EXPOSE 9876 9877 9878 9879
# GET_BROKER_CLUSTER_INFO (106) over the remoting port: answered whatever the ACL settings, needs no admin
# listener and no shell. Adjust the address if listenPort changes or TLS is enforcing.
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
    CMD ["/usr/local/bin/nsadmin", "clusterList", "-n", "127.0.0.1:9876", "-timeout", "2s"]
# SIGTERM (docker stop) makes namesrv finish in-flight requests and flush the KV file; allow it the time.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/namesrv"]
CMD ["-c", "/etc/rocketns/namesrv.properties"]
