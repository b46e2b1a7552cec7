# syntax=docker/dockerfile:1
# redstate's image: compiled in a build stage, run with production dependencies only (no
# TypeScript, no test tools, no 217 MB `restate` CLI) as the unprivileged `node` user.
# .ci/run lints this file and scripts/replay-dockerfile.mjs runs its commands outside a
# container: keep every RUN a command that also works in a plain checkout.

FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
COPY scripts/ scripts/
COPY machines/ machines/
COPY src/ src/
# tsconfig.json compiles the tests too; none of them reaches the runtime stage.
COPY test/ test/
# `npm ci` runs `prepare`, which compiles to dist/ with the dev dependencies.
RUN npm ci --no-audit --no-fund
RUN npm prune --omit=dev --no-audit --no-fund

FROM node:22-bookworm-slim
ENV NODE_ENV=production \
    REDSTATE_DATA_DIR=/data \
    REDSTATE_LOG_FORMAT=json
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules/ node_modules/
COPY --from=build /app/dist/src/ dist/src/
COPY --from=build /app/dist/machines/ dist/machines/
COPY --from=build /app/dist/ui/ dist/ui/
# The Redis store reads its Lua script from the source tree at start (src/store/redis/scripts.ts).
COPY --from=build /app/src/store/redis/lua/ src/store/redis/lua/
# The embedded store's volume, writable by the user the server runs as.
RUN mkdir /data && chown node:node /data
USER node
VOLUME ["/data"]
# ingress, admin, node (/metrics)
EXPOSE 8080 9070 5122
# On the admin port the server was given (REDSTATE_ADMIN_PORT), 9070 by default.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.REDSTATE_ADMIN_PORT || 9070}/health`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "--enable-source-maps", "dist/src/main.js"]
