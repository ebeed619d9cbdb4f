# syntax=docker/dockerfile:1
# The primary: mindroom-primary and the mindroom-agent it installs in agent_cli_bin/. It keeps
# bash, which its job supervisor requires even when --workers-only sends every command to a
# worker. Base images are pinned by digest; move a pin in a change of its own.
FROM golang:1.26-bookworm@sha256:a688600ca24f8a4d3ca77f95b0dd40704a9fc787c826660eb7ba0b641b8b175d AS build
WORKDIR /src
COPY . .
# Only the modules these commands import are fetched (the manifest tests' Kubernetes modules
# are not), into a cache that outlives the build. No VCS stamp (.git need not be in the
# context): `make images` passes git's version and revision for --version instead.
ARG VERSION
ARG REVISION
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -buildvcs=false \
      -ldflags "-X github.com/turncli/turncli/internal/buildinfo.linkedVersion=${VERSION} -X github.com/turncli/turncli/internal/buildinfo.linkedRevision=${REVISION}" \
      -o /out/ ./cmd/mindroom-primary ./cmd/mindroom-agent

FROM debian:bookworm-slim@sha256:96e378d7e6531ac9a15ad505478fcc2e69f371b10f5cdf87857c4b8188404716
COPY --from=build /out/mindroom-primary /out/mindroom-agent /usr/local/bin/
USER 65532:65532
EXPOSE 7420 7421 7423
ENTRYPOINT ["/usr/local/bin/mindroom-primary"]
