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
# The reference pages the gateway serves under /reference (src/reference/reference-pages.ts), rendered at start.
COPY docs/errors.md docs/field-rules.md docs/api-contract.md docs/changelog.md ./docs/
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 3000
# The command's three V8 flags and the allocator, each measured against the image without it
# (docs/benchmarks.md, "Memory": one gateway at a time, balance reads then bank accounts at 50
# connections, peak resident memory over two rounds):
# --max-semi-space-size=16: a young generation of 2 x 16 MiB, as Node 20 sized it; Node 24 sizes it
# from the machine's memory (2 x 32 MiB). Peak 188-202 MiB with it, 276-277 without, for no CPU
# the rounds could tell ("The young generation"). Not a heap limit.
# The allocator: glibc's malloc keeps what V8's worker threads free in arenas of their own,
# resident; jemalloc gives unused pages back within a second (dirty_decay_ms), from a thread of its
# own; two arenas and no per-thread caches. Peak 206-221 MiB on glibc's malloc, no CPU difference
# beyond the rounds' spread ("jemalloc"). Named, not a path: the dynamic linker finds it on any
# architecture, and only warns where it is missing (.ci/image checks).
ENV LD_PRELOAD=libjemalloc.so.2 MALLOC_CONF=background_thread:true,narenas:2,tcache:false,dirty_decay_ms:1000,muzzy_decay_ms:0
# --no-maglev: V8's mid-tier compiler off (functions run as baseline code until its top tier
# optimizes them). Peak 220-226 MiB with Maglev; the CPU moved by less than the rounds' spread
# ("V8's mid-tier compiler"). Node refuses it in NODE_OPTIONS.
# --no-allocation-site-pretenuring: V8 does not decide, from what survived its young generation
# under a gateway's first load (cold, every connection waiting), to allocate those sites' objects
# straight into the old generation from then on. A request's objects are short-lived: once
# pretenured, they cost a gateway 6-36 % more CPU per read from then on, and filled its old
# generation to 335-366 MiB in about half the gateways measured when it was found ("A gateway's
# first load"). Node refuses it in NODE_OPTIONS.
CMD ["node", "--max-semi-space-size=16", "--no-maglev", "--no-allocation-site-pretenuring", "dist/src/main.js"]
