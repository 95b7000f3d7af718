import type { FastifyInstance } from 'fastify';
import { inRequestScope } from '../domain/request-record';
import { ANSWERED, type EdgeStage } from './edge-stage';
import { contextOf } from './request-context';

type RequestStep = NonNullable<EdgeStage['onRequest']>;

/**
 * Installs the stages as one Fastify hook per point of the request's life, running them in the
 * order given: the order is this list's, never the order of calls elsewhere. Each reads the
 * request's context from the request (common/http/request-context.ts).
 * @returns the names of the stages, in the order they run.
 */
export function installPipeline(fastify: FastifyInstance, stages: readonly EdgeStage[]): readonly string[] {
  const names = stages.map((stage) => stage.name);
  if (new Set(names).size !== names.length) throw new Error(`Edge stages must have distinct names: ${names.join(', ')}`);
  const onRequest = stages.flatMap((stage) => (stage.onRequest ? [stage.onRequest] : []));
  // On the way out, the last stage's first: what a stage does as the answer leaves (an admin path's audit event) is done before the stages before it let go of the request (the drain's count).
  const onSend = stages.flatMap((stage) => (stage.onSend ? [stage.onSend] : [])).reverse();
  const onResponse = stages.flatMap((stage) => (stage.onResponse ? [stage.onResponse] : []));
  const onAbort = stages.flatMap((stage) => (stage.onAbort ? [stage.onAbort] : []));

  fastify.addHook('onRequest', (request, reply, done) => {
    // Synchronous stages run one after the other; the first promise waits, and the rest follow it.
    const run = (from: number): void => {
      for (let index = from; index < onRequest.length; index++) {
        let pending: ReturnType<RequestStep>;
        try {
          pending = onRequest[index](request, reply);
        } catch (refusal) {
          return done(refusal as Error);
        }
        // The stage answered the request itself: Fastify is not told to go on (its hook's `done` is not called).
        if (pending === ANSWERED) return;
        if (pending !== undefined) {
          pending.then((outcome) => (outcome === ANSWERED ? undefined : run(index + 1)), done);
          return;
        }
      }
      done();
    };
    run(0);
  });
  // The route's handler (Nest's guard, pipes and controller) runs in the request's scope,
  // where whatever serves it finds its record (currentRecord). Entered here, just before the handler,
  // because Fastify reads a body in the connection's own async context, which the hooks after it
  // inherit: a scope entered at onRequest would not reach the handler of a request with a body.
  fastify.addHook('preHandler', (request, _reply, done) => inRequestScope(contextOf(request.raw).record, () => done()));
  if (onSend.length > 0) {
    fastify.addHook('onSend', (request, reply, payload, done) => {
      const run = (from: number): void => {
        for (let index = from; index < onSend.length; index++) {
          let pending: void | Promise<void>;
          try {
            pending = onSend[index](request, reply);
          } catch (error) {
            return done(error as Error);
          }
          if (pending !== undefined) {
            pending.then(() => run(index + 1), done);
            return;
          }
        }
        done(null, payload);
      };
      run(0);
    });
  }
  if (onResponse.length > 0) {
    fastify.addHook('onResponse', (request, reply, done) => {
      for (const step of onResponse) step(request, reply);
      done();
    });
  }
  if (onAbort.length > 0) {
    fastify.addHook('onRequestAbort', (request, done) => {
      for (const step of onAbort) step(request);
      done();
    });
  }
  return names;
}
