const { rmSync } = require('node:fs');

module.exports = async function globalTeardown() {
  const embedded = globalThis.__embeddedTestDatabase;
  if (!embedded) return;
  await embedded.handle.stop();
  rmSync(embedded.dataDir, { recursive: true, force: true });
};
