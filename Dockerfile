# Build: compile TypeScript with the full dependency set.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY migrations ./migrations
RUN npm run build

# Run: production dependencies and the compiled output only, as the unprivileged node user.
FROM node:24-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000
WORKDIR /app
COPY package.json package-lock.json ./
# The embedded PostgreSQL (an optional dependency, about 60 MB) is for development only: live mode
# always has DATABASE_URL.
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# The reference web app, served at /app/ in sandbox mode.
COPY web-app ./web-app
# The stand-alone sandbox keeps its key pair under DATA_DIR=/data (a volume in docker-compose.yml).
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 3000
CMD ["node", "dist/src/main.js"]
