/**
 * Says when each test file starts, with the time, so that a run that stops making progress names
 * the file it stopped in (Jest itself prints a file only when it has finished). .ci/run turns it
 * on with SUITE_PROGRESS=1.
 */
class SuiteProgressReporter {
  onTestFileStart(test) {
    const path = test.path.slice(test.context.config.rootDir.length + 1);
    process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] started ${path}\n`);
  }
}

module.exports = SuiteProgressReporter;
