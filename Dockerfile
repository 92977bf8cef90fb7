# The sallyport stack image: gateway + assistant runtime + moderator runtime, supervised by
# `sallyport up`. Paths inside the container follow the spec's layer table (see compose.yaml).
#
#   docker build -t sallyport:local .
#
# Build arguments:
#   BASE_IMAGE     the Node 20 Debian bookworm base (default node:20-bookworm-slim). Without a
#                  registry, `scripts/image/build-base.sh` builds an equivalent one locally and
#                  prints its tag: --build-arg BASE_IMAGE="$(scripts/image/build-base.sh)".
#   EXTRA_CA_CERT  PEM text of extra CA certificates to trust, for a TLS-intercepting proxy on the
#                  build's npm traffic and the runtime's provider traffic:
#                  --build-arg EXTRA_CA_CERT="$(cat /usr/local/share/ca-certificates/*.crt)".
#                  Certificates are public; never pass a private key or a token this way.
# Builds with the classic builder and with BuildKit; needs the npm registry and Debian's mirror
# (`--network host` where the engine has no bridge).
ARG BASE_IMAGE=node:20-bookworm-slim

FROM ${BASE_IMAGE} AS build
ARG EXTRA_CA_CERT=
ENV TURBO_TELEMETRY_DISABLED=1 \
    npm_config_update_notifier=false \
    npm_config_fund=false \
    npm_config_audit=false
WORKDIR /src
COPY . .
# What goes into /opt/sallyport is what `npm install sallyport` gives a user: the packages are
# built, packed, and installed from their tarballs with plain npm, production dependencies only
# (scripts/pack-install.sh, the same script the pack-install test runs).
RUN set -eu; \
  if [ -n "$EXTRA_CA_CERT" ]; then \
    printf '%s\n' "$EXTRA_CA_CERT" > /tmp/extra-ca.pem; export NODE_EXTRA_CA_CERTS=/tmp/extra-ca.pem; \
  fi; \
  npm install --global pnpm@10.34.9; \
  pnpm install --frozen-lockfile; \
  pnpm turbo run build --filter=sallyport...; \
  bash scripts/pack-install.sh /opt/sallyport; \
  rm -f /tmp/extra-ca.pem

FROM ${BASE_IMAGE}
ARG EXTRA_CA_CERT=
LABEL org.opencontainers.image.title="sallyport" \
      org.opencontainers.image.description="MCP gateway in front of a self-hosted OpenCode agent runtime" \
      io.sallyport.runtime="opencode-ai@1.18.33"
# git: the runtime's snapshots and diffs; ripgrep: the workspace guard's search engine (without it
# the built-in engine runs, about 4x slower); tini: signals reach `sallyport up`, zombies are reaped.
RUN set -eu; \
  apt-get update; \
  apt-get install --yes --no-install-recommends ca-certificates git ripgrep tini; \
  rm -rf /var/lib/apt/lists/*; \
  if [ -n "$EXTRA_CA_CERT" ]; then \
    printf '%s\n' "$EXTRA_CA_CERT" > /usr/local/share/ca-certificates/sallyport-extra.crt; \
    update-ca-certificates; \
  fi
RUN groupadd --system --gid 10001 sallyport \
  && useradd --system --uid 10001 --gid sallyport --home-dir /stack/state/home --shell /usr/sbin/nologin sallyport \
  && mkdir -p /stack /work /etc/sallyport/policy \
  && chown sallyport:sallyport /stack /work
COPY --from=build /opt/sallyport /opt/sallyport
# SALLYPORT_MANAGED_DIR becomes the runtime's OPENCODE_CONFIG_DIR (/etc/opencode, read-only mount);
# the operator policy file is mounted alone into /etc/sallyport/policy (the runtime's managed layer).
# The gateway's bind address is the stack file's `gateway.host` (`sallyport init --container`
# writes 0.0.0.0); nothing here overrides it. NODE_EXTRA_CA_CERTS: Node and the runtime trust the
# system store, which holds EXTRA_CA_CERT when one was given. SALLYPORT_LOG_FORMAT=json: the
# container's log is JSON lines even under `docker run -t` (a terminal would get human lines).
ENV NODE_ENV=production \
    NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt \
    SALLYPORT_IMAGE=1 \
    SALLYPORT_LOG_FORMAT=json \
    SALLYPORT_DIR=/stack \
    SALLYPORT_MANAGED_DIR=/etc/opencode \
    SALLYPORT_POLICY_DIR=/etc/sallyport/policy \
    SALLYPORT_WORKSPACE=/work
USER sallyport
WORKDIR /work
EXPOSE 8787
# `sallyport health` reads the gateway's host and port from the stack file, so any gateway.port works.
HEALTHCHECK --interval=30s --timeout=5s --start-period=90s --retries=3 \
  CMD ["node", "/opt/sallyport/node_modules/sallyport/dist/bin.js", "health"]
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/opt/sallyport/node_modules/sallyport/dist/bin.js"]
CMD ["up"]
