import {
  ArgumentsHost,
  Body,
  CallHandler,
  Catch,
  Controller,
  createParamDecorator,
  ExceptionFilter,
  ExecutionContext,
  Get,
  Header,
  HttpCode,
  Module,
  NestInterceptor,
  Param,
  Post,
  Query,
  Req,
  Res,
  Type,
  ValidationPipe,
} from '@nestjs/common';
import { DiscoveryModule, NestFactory } from '@nestjs/core';
import { RouterProxy } from '@nestjs/core/router/router-proxy';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { IsInt, IsString, IsUUID } from 'class-validator';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Observable, of } from 'rxjs';
import { directHandlerRule } from './route-handler';
import { installRouteRules } from './route-rules';

class IdParams {
  @IsUUID()
  readonly id!: string;
}

class Filter {
  @IsString()
  readonly name!: string;
}

class Created {
  @IsInt()
  readonly count!: number;
}

/** A custom parameter decorator, as the service's own (the caller, the request's record) are made. */
const Caller = createParamDecorator((data: string | undefined, context: ExecutionContext) => {
  const request = context.switchToHttp().getRequest<FastifyRequest>();
  return `${data ?? 'caller'}:${String(request.headers['x-caller'])}:${context.getClass().name}.${context.getHandler().name}`;
});

const ID = '5b1f2d7c-3e0a-4f4e-8d61-0a9c3b7e2f44';

@Controller('things')
class Things {
  @Get(':id')
  one(@Param() params: IdParams, @Query() filter: Filter, @Caller('who') caller: string, @Req() request: FastifyRequest) {
    return { params, paramsValidated: params instanceof IdParams, filter, caller, method: request.method };
  }

  @Post()
  create(@Body() body: Created) {
    return { body, bodyValidated: body instanceof Created };
  }

  @Post('accepted')
  @HttpCode(202)
  accept(@Body('count') count: unknown) {
    return { count: count === undefined ? 'absent' : count };
  }

  @Get(':id/nothing')
  nothing() {
    return undefined;
  }

  @Get('observed/last')
  observed(): Observable<{ emitted: number }> {
    return of({ emitted: 1 }, { emitted: 2 });
  }

  @Get('failing/always')
  failing() {
    throw new Error('the handler failed');
  }

  @Get('with/header')
  @Header('x-from', 'decorator')
  headed(@Res({ passthrough: true }) reply: FastifyReply) {
    void reply.header('x-also', 'reply');
    return { headed: true };
  }

  @Get('with/redirect')
  @HttpCode(200)
  moved(@Res({ passthrough: true }) reply: FastifyReply) {
    void reply.code(302).header('location', '/elsewhere');
    return null;
  }

  @Get('with/reply')
  handled(@Res() reply: FastifyReply) {
    void reply.send({ handled: true });
  }
}

/** Every failure, answered as the application's one filter answers it. */
@Catch()
class OneFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const status = (exception as { getStatus?: () => number }).getStatus?.() ?? 500;
    void reply.code(status).send({ filtered: exception instanceof Error ? exception.message : 'unknown' });
  }
}

/** How many requests Nest's router ran (its proxy, which every route it serves goes through), counted in this process. */
let nestRouted = 0;
const createProxy = RouterProxy.prototype.createProxy.bind(RouterProxy.prototype);

async function appWith(controllers: Type<unknown>[], setUp?: (app: NestFastifyApplication) => void): Promise<{ app: NestFastifyApplication; base: string }> {
  @Module({ imports: [DiscoveryModule], controllers })
  class TestModule {}
  const app = await NestFactory.create<NestFastifyApplication>(TestModule, new FastifyAdapter(), { logger: false });
  app.useGlobalPipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }));
  app.useGlobalFilters(new OneFilter());
  setUp?.(app);
  installRouteRules(app, app.getHttpAdapter().getInstance(), [directHandlerRule(app)]);
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  return { app, base: `http://127.0.0.1:${address.port}` };
}

/** The answer, and whether Nest's router ran for it. */
async function served(url: string, init?: RequestInit): Promise<{ status: number; body: unknown; viaNest: boolean; headers: Headers }> {
  const before = nestRouted;
  const response = await fetch(url, { redirect: 'manual', ...init });
  const text = await response.text();
  return { status: response.status, body: text === '' ? '' : (JSON.parse(text) as unknown), viaNest: nestRouted > before, headers: response.headers };
}

const json = (body: string): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body });

describe('directHandlerRule', () => {
  let app: NestFastifyApplication | undefined;
  beforeAll(() => {
    RouterProxy.prototype.createProxy = function (target, handler) {
      const proxy = createProxy(target, handler);
      return (request, reply, next) => {
        nestRouted += 1;
        return proxy(request, reply, next);
      };
    };
  });
  afterAll(() => {
    RouterProxy.prototype.createProxy = createProxy;
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('when a route takes its path, query, body, request and a custom decorator, then Fastify runs it without Nest’s router, with the global pipe applied as Nest applies it', async () => {
    let base: string;
    ({ app, base } = await appWith([Things]));

    const read = await served(`${base}/things/${ID}?name=x`, { headers: { 'x-caller': 'ada' } });
    const created = await served(`${base}/things`, json('{"count":2}'));
    const accepted = await served(`${base}/things/accepted`, json('{"count":3}'));
    const head = await served(`${base}/things/${ID}?name=x`, { method: 'HEAD' });

    expect(read).toMatchObject({
      status: 200,
      viaNest: false,
      body: { params: { id: ID }, paramsValidated: true, filter: { name: 'x' }, caller: 'who:ada:Things.one', method: 'GET' },
    });
    expect(created).toMatchObject({ status: 201, viaNest: false, body: { body: { count: 2 }, bodyValidated: true } });
    expect(accepted).toMatchObject({ status: 202, viaNest: false, body: { count: 3 } });
    expect(head).toMatchObject({ status: 200, viaNest: false, body: '' });
  });

  it('when a keyed body argument meets an array body, then it is absent, as Nest reads it (an own property only)', async () => {
    let base: string;
    ({ app, base } = await appWith([Things]));

    expect(await served(`${base}/things/accepted`, json('[]'))).toMatchObject({ status: 202, viaNest: false, body: { count: 'absent' } });
  });

  it('when an argument fails the pipe, or the handler throws, then the application’s filter answers, as under Nest’s router', async () => {
    let base: string;
    ({ app, base } = await appWith([Things]));

    const badId = await served(`${base}/things/not-a-uuid?name=x`);
    const unknownField = await served(`${base}/things`, json('{"count":1,"extra":true}'));
    const failing = await served(`${base}/things/failing/always`);

    expect(badId).toMatchObject({ status: 400, viaNest: false, body: { filtered: 'Bad Request Exception' } });
    expect(unknownField).toMatchObject({ status: 400, viaNest: false, body: { filtered: 'Bad Request Exception' } });
    expect(failing).toMatchObject({ status: 500, viaNest: false, body: { filtered: 'the handler failed' } });
  });

  it('when a handler returns nothing, or an Observable, then the answer is Nest’s: empty, or the last value', async () => {
    let base: string;
    ({ app, base } = await appWith([Things]));

    expect(await served(`${base}/things/${ID}/nothing`)).toMatchObject({ status: 200, viaNest: false, body: '' });
    expect(await served(`${base}/things/observed/last`)).toMatchObject({ status: 200, viaNest: false, body: { emitted: 2 } });
  });

  it('when a path parameter is empty, then Nest’s router answers it (not found), as it does for every route', async () => {
    let base: string;
    ({ app, base } = await appWith([Things]));

    expect(await served(`${base}/things//nothing`)).toMatchObject({ status: 404, viaNest: true });
  });

  it('when a route sets headers by decorator and on its reply (@Res passthrough), then Fastify runs it and the answer carries both', async () => {
    let base: string;
    ({ app, base } = await appWith([Things]));
    const headed = await served(`${base}/things/with/header`);

    expect([headed.status, headed.viaNest, headed.headers.get('x-from'), headed.headers.get('x-also'), headed.body]).toEqual([
      200,
      false,
      'decorator',
      'reply',
      { headed: true },
    ]);
  });

  it('when a handler sets its own status on its reply (@Res passthrough), then that status stands, as under Nest’s router (the route’s status is set before the handler only)', async () => {
    let base: string;
    ({ app, base } = await appWith([Things]));
    const moved = await served(`${base}/things/with/redirect`);

    expect([moved.status, moved.viaNest, moved.headers.get('location')]).toEqual([302, false, '/elsewhere']);
  });

  it('when a route answers on its own reply (@Res), or any interceptor applies, then Nest’s router runs it as before', async () => {
    let base: string;
    ({ app, base } = await appWith([Things]));
    expect(await served(`${base}/things/with/reply`)).toMatchObject({ status: 200, viaNest: true, body: { handled: true } });
    await app.close();

    const seen: string[] = [];
    const interceptor: NestInterceptor = {
      intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
        seen.push(context.getHandler().name);
        return next.handle();
      },
    };
    ({ app, base } = await appWith([Things], (nest) => nest.useGlobalInterceptors(interceptor)));
    const read = await served(`${base}/things/${ID}?name=x`);

    expect([read.status, read.viaNest, seen]).toEqual([200, true, ['one']]);
  });
});
