# syntax=docker/dockerfile:1
# 1. build: every dependency, compile TypeScript to dist/.
FROM node:20-bookworm-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY migrations ./migrations
COPY scripts/bundle-cli.mjs ./scripts/
RUN npm ci --no-audit --no-fund --ignore-scripts && npm rebuild better-sqlite3 esbuild && npm run build

# 2. deps: production dependencies only, better-sqlite3 compiled for this image.
FROM node:20-bookworm-slim AS deps
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts && npm rebuild better-sqlite3

# 3. runtime: dist/ and production node_modules, as the unprivileged node user.
FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
RUN mkdir -p /data /config && chown node:node /data
USER node
VOLUME ["/data"]
ENTRYPOINT ["node", "bin/callsync.js"]
CMD ["schedule", "--config", "/config/callsync.config.json"]
