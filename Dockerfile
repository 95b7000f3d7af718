# The Node.js release the image runs: the LTS that .nvmrc names, pinned to one exact release. .ci/run
# runs the test suite on this release and .ci/image builds this file on it; both read this line.
# Pinned by tag, not by digest: a digest (node:X.Y.Z-bookworm-slim@sha256:…) can only be read from
# an image registry, and the machines this project is built and tested on reach none. Add the digest
# where a registry is reachable, and move it together with NODE_VERSION.
ARG NODE_VERSION=24.21.0

# Build: compile TypeScript with the full dependency set.
FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# No install scripts: compiling needs none, and the development packages that have them (the Node
# release a checkout runs on, the embedded PostgreSQL) have no place here: this image is Node.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
# npm run build is tsc, then scripts/prune-dist.mjs.
COPY scripts/prune-dist.mjs ./scripts/
COPY src ./src
COPY migrations ./migrations
RUN npm run build

# The provider's stand-in (development tooling, dev/): the stand-alone sandbox docker-compose.yml
# runs beside the gateway (`--target sandbox`). The production image below holds none of dev/.
FROM build AS sandbox
COPY dev ./dev
RUN npm run build && mkdir -p /data && chown node:node /data
ENV NODE_ENV=production DATA_DIR=/data
USER node
CMD ["node", "dist/dev/sandbox/main.js"]

# Run: production dependencies and the service's compiled output only (dist/src, dist/migrations:
# no development tooling), as the unprivileged node user.
FROM node:${NODE_VERSION}-bookworm-slim
# DATA_DIR holds the keys the service makes when none is configured and the stand-alone sandbox's
# key pair; /data is the node user's (below), the default ./.data would be root's /app/.data.
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 DATA_DIR=/data
# jemalloc, Debian's libjemalloc2, as the process's allocator (LD_PRELOAD below): the build reaches
# Debian's mirror for it, as it reaches the npm registry. bookworm's package changes only by
# Debian's security and point releases.
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libjemalloc2 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# Dependencies only: development's packages (the embedded PostgreSQL, the development OpenID
# provider, the Node release a checkout runs on) are devDependencies, and src/ imports none of them
# (npm run lint).
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist/src ./dist/src
COPY --from=build /app/dist/migrations ./dist/migrations
# The operator commands (npm run -s clients -- …, npm run -s audit:verify, …) run here as in a
# checkout: build-if-changed finds no src/ to build from and leaves dist/ as it is.
COPY scripts/build-if-changed.mjs scripts/prune-dist.mjs scripts/local-database.cjs ./scripts/
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 3000
# A young generation of 2 × 16 MiB, as Node 20 sized it: Node 24 sizes it from the machine's memory
# (2 × 32 MiB here), which made the gateway's resident memory at saturation 305 MiB instead of
# 220-250, for no CPU it could measure (docs/benchmarks.md, "Memory"). Not a heap limit.
# The allocator: glibc's malloc keeps what V8's worker threads free in arenas of their own, resident
# (after a load, malloc_trim gave 17 MiB of it back); jemalloc gives unused pages back within a
# second (dirty_decay_ms), from a thread of its own. Two arenas and no per-thread caches held about
# 4 MiB less idle; no peak or CPU difference could be told from the rounds' spread. Two whole
# throughput runs peaked at 225 and 214 MiB with it, two alternated with them at 248 and 268
# without; paired rounds could tell no CPU cost from their spread (docs/benchmarks.md, "jemalloc").
# Named, not a path: the dynamic linker finds it on any architecture, and only warns where it is
# missing (.ci/image checks).
ENV LD_PRELOAD=libjemalloc.so.2 MALLOC_CONF=background_thread:true,narenas:2,tcache:false,dirty_decay_ms:1000,muzzy_decay_ms:0
# --no-maglev: V8's mid-tier compiler off (functions run as baseline code until its top tier
# optimizes them). With it, the peak at saturation was 175-178 MiB against 194-198 in three rounds
# each, and 203 and 190 MiB against 207 and 203 in four whole benchmark runs; paired rounds put
# the CPU per read at 1.07 and 0.99 x without it (medians), dearer in the first round after start
# (docs/benchmarks.md, "V8's mid-tier compiler"). Node refuses it in NODE_OPTIONS.
# --no-allocation-site-pretenuring: V8 does not decide, from what survived its young generation
# under a gateway's first load (slow, cold, every connection waiting), to allocate those sites'
# objects straight into the old generation from then on. A request's objects are short-lived:
# once pretenured, they filled the old generation with garbage to 335-366 MiB and cost 6-36 %
# more CPU per read from then on, in 12 of 25 paired runs, in one of the two gateways, mostly the
# one loaded first; with the flag, in none of 5 (docs/benchmarks.md, "A gateway's first load").
CMD ["node", "--max-semi-space-size=16", "--no-maglev", "--no-allocation-site-pretenuring", "dist/src/main.js"]
