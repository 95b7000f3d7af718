// Where the traced gateway's spans go in the throughput bench: an OTLP/HTTP receiver that accepts
// every export (200, as a collector does) and keeps only counts, so that what is measured is the
// gateway's cost of tracing, not a collector's.
import { createServer } from 'node:http';

const port = Number(process.env.PORT ?? 0);
let exports = 0;
let bytes = 0;
const server = createServer((request, response) => {
  request.on('data', (chunk) => (bytes += chunk.length));
  request.on('end', () => {
    exports++;
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
server.listen(port, '127.0.0.1', () => process.stdout.write(`otlp sink listening on ${server.address().port}\n`));
process.once('SIGTERM', () => {
  process.stdout.write(`otlp sink received ${exports} exports, ${bytes} bytes\n`);
  server.close(() => process.exit(0));
});
