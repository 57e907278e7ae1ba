# One image for every Trellis service; docker-compose.yml picks the entry point per service.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY apps ./apps
COPY libs ./libs
COPY cli ./cli
COPY bench ./bench
COPY examples ./examples
COPY plugins ./plugins
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
# writable by the service user: the embedded default's data directory (./data: PGlite and the
# simulator's state) and the stand-alone simulator's state volume (docker-compose.yml)
RUN mkdir -p /app/data /home/node/simulator && chown node:node /app/data /home/node/simulator
USER node
# default: the embedded all-in-one, with package.json's start flags (BENCHMARKS.md, footprint: they
# keep PGlite's WebAssembly code and the V8 heaps small); compose overrides the command per service
CMD ["node", "--liftoff-only", "--optimize-for-size", "--max-semi-space-size=2", "--v8-pool-size=1", "dist/cli/trellis.js", "start"]
