import { Controller, Get, HttpCode, Injectable, Module, Type } from '@nestjs/common';
import { APP_GUARD, NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { CanActivate, ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Reflector } from '@nestjs/core';
import { asFailureAnswer, installAnswer, RESPONSE_MESSAGE, ResponseMessage } from './answer';
import { contextOf } from './request-context';
import { RecordedProblem, RequestRecorder } from './request-recorder.port';

/** The successes recorded, by path: what the audit's recorder would have written. */
class RecordedSuccesses extends RequestRecorder {
  readonly successes: string[] = [];
  recordSuccess(request: FastifyRequest, status: number): Promise<string | undefined> {
    this.successes.push(`${status} ${request.url}`);
    return Promise.resolve(undefined);
  }
  recordFailure(_request: FastifyRequest, _problem: RecordedProblem): Promise<string | undefined> {
    return Promise.resolve(undefined);
  }
  logAddressOf(): string | undefined {
    return undefined;
  }
}

/** What the service's access guard does for the answer: notes each controller route's message. */
@Injectable()
class NotingGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}
  canActivate(context: ExecutionContext): boolean {
    const message = this.reflector.getAllAndOverride<string | undefined>(RESPONSE_MESSAGE, [context.getHandler(), context.getClass()]);
    contextOf(context.switchToHttp().getRequest<FastifyRequest>().raw).answer = { message, recorded: false };
    return true;
  }
}

@Controller('answers')
class Answers {
  @Get('data')
  @ResponseMessage('Here it is')
  data() {
    return { value: 1 };
  }

  @Get('none')
  none() {
    return null;
  }

  @Get('nothing')
  @HttpCode(204)
  nothing(): void {}

  @Get('text')
  text() {
    return 'plain';
  }
}

async function started(controllers: Type<unknown>[], recorder: RequestRecorder): Promise<{ app: NestFastifyApplication; base: string }> {
  @Module({ controllers, providers: [{ provide: APP_GUARD, useClass: NotingGuard }] })
  class TestModule {}
  const app = await NestFactory.create<NestFastifyApplication>(TestModule, new FastifyAdapter(), { logger: false });
  const fastify = app.getHttpAdapter().getInstance();
  installAnswer(fastify, recorder);
  // A route outside the controllers, and a failure's answer: neither is wrapped.
  fastify.get('/outside', () => ({ raw: true }));
  fastify.get('/failed', (_request, reply) => reply.status(400).send(asFailureAnswer({ status: 400, error: { code: 'X' } })));
  await app.listen(0, '127.0.0.1');
  return { app, base: `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}` };
}

describe(installAnswer.name, () => {
  let app: NestFastifyApplication;
  let base: string;
  const recorder = new RecordedSuccesses();

  beforeAll(async () => {
    ({ app, base } = await started([Answers], recorder));
  });
  afterAll(async () => {
    await app.close();
  });
  beforeEach(() => {
    recorder.successes.length = 0;
  });

  it('when a handler returns data or null, then the envelope carries it with the route’s message, and the success is recorded once', async () => {
    const data = await (await fetch(`${base}/answers/data`)).json();
    const none = await (await fetch(`${base}/answers/none`)).json();

    expect(data).toEqual({ status: 200, message: 'Here it is', data: { value: 1 }, error: null });
    expect(none).toEqual({ status: 200, message: 'OK', data: null, error: null });
    expect(recorder.successes).toEqual(['200 /answers/data', '200 /answers/none']);
  });

  it('when a handler returns nothing or a string (no payload Fastify serialises), then it goes out as it is, and its success is still recorded, once', async () => {
    const nothing = await fetch(`${base}/answers/nothing`);
    const text = await fetch(`${base}/answers/text`);

    expect([nothing.status, text.status, await text.text()]).toEqual([204, 200, 'plain']);
    expect(recorder.successes).toEqual(['204 /answers/nothing', '200 /answers/text']);
  });

  it('when a route is not a controller’s, or the answer is a failure’s, then it is neither wrapped nor recorded as a success', async () => {
    const outside = await (await fetch(`${base}/outside`)).json();
    const failed = await (await fetch(`${base}/failed`)).json();

    expect(outside).toEqual({ raw: true });
    expect(failed).toEqual({ status: 400, error: { code: 'X' } });
    expect(recorder.successes).toEqual([]);
  });
});
