# syntax=docker/dockerfile:1
# The agentgate stack image: gateway + assistant runtime + moderator runtime, supervised by
# `agentgate up`. Paths inside the container follow the spec's layer table (see compose.yaml).

FROM node:20-bookworm-slim AS build
WORKDIR /src
RUN npm install --global pnpm@10.34.9
COPY . .
# The opencode-ai postinstall stays disabled (pnpm-workspace.yaml): the CLI resolves the pinned
# platform binary itself, and nothing runs with a real HOME at build time.
RUN pnpm install --frozen-lockfile \
  && pnpm turbo run build --filter=@agentgate/cli... \
  && pnpm --filter @agentgate/cli deploy --prod /opt/agentgate

FROM node:20-bookworm-slim
LABEL org.opencontainers.image.title="agentgate" \
      io.agentgate.runtime="opencode-ai@1.18.33"
# git: the runtime's snapshots and diffs; ripgrep: the workspace guard's search engine (without it
# the built-in engine runs, about 4x slower); tini: signals reach `agentgate up`, zombies are reaped.
RUN apt-get update \
  && apt-get install --yes --no-install-recommends ca-certificates git ripgrep tini \
  && rm -rf /var/lib/apt/lists/*
RUN groupadd --system --gid 10001 agentgate \
  && useradd --system --uid 10001 --gid agentgate --home-dir /stack/state/home --shell /usr/sbin/nologin agentgate \
  && mkdir -p /stack /work /etc/agentgate/policy \
  && chown agentgate:agentgate /stack /work
COPY --from=build /opt/agentgate /opt/agentgate
# AGENTGATE_MANAGED_DIR becomes the runtime's OPENCODE_CONFIG_DIR (/etc/opencode, read-only mount);
# the operator policy file is mounted alone into /etc/agentgate/policy (the runtime's managed layer).
ENV NODE_ENV=production \
    AGENTGATE_DIR=/stack \
    AGENTGATE_MANAGED_DIR=/etc/opencode \
    AGENTGATE_POLICY_DIR=/etc/agentgate/policy \
    AGENTGATE_WORKSPACE=/work \
    AGENTGATE_GATEWAY_HOST=0.0.0.0
USER agentgate
WORKDIR /work
EXPOSE 8787
HEALTHCHECK --interval=30s --timeout=5s --start-period=90s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8787/health').then((r) => r.json()).then((b) => process.exit(b.ok === true ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/opt/agentgate/dist/bin.js"]
CMD ["up"]
