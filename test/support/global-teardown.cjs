const { rmSync } = require('node:fs');

module.exports = async function globalTeardown() {
  const embedded = globalThis.__embeddedTestDatabase;
  if (!embedded) return;
  // Each project on the database runs this, after every test of the run: the first stops the server.
  globalThis.__embeddedTestDatabase = undefined;
  await embedded.handle.stop();
  rmSync(embedded.dataDir, { recursive: true, force: true });
};
