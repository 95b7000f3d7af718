import Fastify, { FastifyInstance } from 'fastify';
import type { EdgeStage } from './edge-stage';
import { installPipeline } from './pipeline';
import { contextOf } from './request-context';

/** A stage that notes when it runs; `wait` makes its onRequest asynchronous. */
function noting(name: string, seen: string[], options: { wait?: boolean; refuse?: boolean; waitOnSend?: boolean } = {}): EdgeStage {
  return {
    name,
    onRequest: (request) => {
      seen.push(`${name}:request:${contextOf(request.raw).record ? 'with-record' : 'without'}`);
      if (options.refuse) {
        const refusal = Object.assign(new Error(`${name} refuses`), { statusCode: 418 });
        if (options.wait) return Promise.reject(refusal);
        throw refusal;
      }
      return options.wait ? new Promise<void>((resolve) => setTimeout(resolve, 5)) : undefined;
    },
    onSend: () => {
      if (!options.waitOnSend) return void seen.push(`${name}:send`);
      return new Promise<void>((resolve) => setTimeout(resolve, 5)).then(() => void seen.push(`${name}:send`));
    },
    onResponse: () => void seen.push(`${name}:response`),
  };
}

describe('installPipeline', () => {
  let app: FastifyInstance;
  let seen: string[];

  async function serve(stages: EdgeStage[]): Promise<{ status: number; names: readonly string[] }> {
    app = Fastify();
    const names = installPipeline(app, stages);
    app.get('/', async (request) => {
      seen.push(`handler:${contextOf(request.raw).record ? 'with-record' : 'without'}`);
      return 'ok';
    });
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const answer = await fetch(address);
    await answer.text();
    // onResponse runs once the answer has gone: closing waits for it.
    await app.close();
    return { status: answer.status, names };
  }

  beforeEach(() => (seen = []));
  afterEach(() => app.close());

  it('when stages are sync and async, then each runs in the listed order, and the handler after them, each with the request’s record; as the answer leaves, in the reverse order, each waited for', async () => {
    const { status, names } = await serve([noting('first', seen), noting('second', seen, { wait: true, waitOnSend: true }), noting('third', seen)]);

    expect(status).toBe(200);
    expect(names).toEqual(['first', 'second', 'third']);
    expect(seen).toEqual([
      'first:request:with-record',
      'second:request:with-record',
      'third:request:with-record',
      'handler:with-record',
      'third:send',
      'second:send',
      'first:send',
      'first:response',
      'second:response',
      'third:response',
    ]);
  });

  it.each([
    ['throws', false],
    ['rejects', true],
  ])('when a stage %s, then the stages after it and the handler do not run, and the request is answered with its error', async (_how, wait) => {
    const { status } = await serve([noting('first', seen), noting('refusing', seen, { refuse: true, wait }), noting('never', seen)]);

    expect(status).toBe(418);
    expect(seen.filter((step) => step.endsWith(':request:with-record') || step.startsWith('handler'))).toEqual([
      'first:request:with-record',
      'refusing:request:with-record',
    ]);
    expect(seen).toContain('never:response');
  });

  it('when two stages share a name, then installing refuses', () => {
    app = Fastify();
    expect(() => installPipeline(app, [{ name: 'same' }, { name: 'same' }])).toThrow('distinct names');
  });
});
