import {
  Body,
  CallHandler,
  Controller,
  createParamDecorator,
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
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { IsInt, IsString, IsUUID } from 'class-validator';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Observable } from 'rxjs';
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

/** Whether the route's handler is the direct one (its config carries it) or Nest's router. */
const servedBy = (request: FastifyRequest) => ((request.routeOptions.config as unknown as Record<string, unknown>).directHandler ? 'direct' : 'nest');

const ID = '5b1f2d7c-3e0a-4f4e-8d61-0a9c3b7e2f44';

@Controller('things')
class Things {
  @Get(':id')
  one(@Param() params: IdParams, @Query() filter: Filter, @Caller('who') caller: string, @Req() request: FastifyRequest) {
    return { params, paramsValidated: params instanceof IdParams, filter, caller, servedBy: servedBy(request) };
  }

  @Post()
  create(@Body() body: Created, @Req() request: FastifyRequest) {
    return { body, bodyValidated: body instanceof Created, servedBy: servedBy(request) };
  }

  @Post('accepted')
  @HttpCode(202)
  accept(@Body('count') count: number, @Req() request: FastifyRequest) {
    return { count, servedBy: servedBy(request) };
  }

  @Get(':id/nothing')
  nothing() {
    return undefined;
  }

  @Get('with/header')
  @Header('x-from', 'decorator')
  headed(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    void reply.header('x-also', 'reply');
    return { servedBy: servedBy(request) };
  }

  @Get('with/redirect')
  @HttpCode(200)
  moved(@Res({ passthrough: true }) reply: FastifyReply) {
    void reply.code(302).header('location', '/elsewhere');
    return null;
  }

  @Get('with/reply')
  handled(@Res() reply: FastifyReply, @Req() request: FastifyRequest) {
    void reply.send({ servedBy: servedBy(request) });
  }
}

async function appWith(controllers: Type<unknown>[], setUp?: (app: NestFastifyApplication) => void): Promise<{ app: NestFastifyApplication; base: string }> {
  @Module({ imports: [DiscoveryModule], controllers })
  class TestModule {}
  const app = await NestFactory.create<NestFastifyApplication>(TestModule, new FastifyAdapter(), { logger: false });
  app.useGlobalPipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }));
  setUp?.(app);
  installRouteRules(app, app.getHttpAdapter().getInstance(), [directHandlerRule(app)]);
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  return { app, base: `http://127.0.0.1:${address.port}` };
}

async function answer(response: Response): Promise<[number, unknown]> {
  const text = await response.text();
  return [response.status, text === '' ? '' : (JSON.parse(text) as unknown)];
}

describe('directHandlerRule', () => {
  let app: NestFastifyApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('when a route takes its path, query, body, request and a custom decorator, then Fastify runs it directly, with the global pipe applied as Nest applies it', async () => {
    let base: string;
    ({ app, base } = await appWith([Things]));

    const read = await fetch(`${base}/things/${ID}?name=x`, { headers: { 'x-caller': 'ada' } });
    const created = await fetch(`${base}/things`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ count: 2 }) });
    const accepted = await fetch(`${base}/things/accepted`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ count: 3 }),
    });

    expect(await answer(read)).toEqual([
      200,
      { params: { id: ID }, paramsValidated: true, filter: { name: 'x' }, caller: 'who:ada:Things.one', servedBy: 'direct' },
    ]);
    expect(await answer(created)).toEqual([201, { body: { count: 2 }, bodyValidated: true, servedBy: 'direct' }]);
    expect(await answer(accepted)).toEqual([202, { count: 3, servedBy: 'direct' }]);
  });

  it('when an argument fails the pipe, then the error reaches the error handler (Nest’s filters) and the answer is the pipe’s refusal', async () => {
    let base: string;
    ({ app, base } = await appWith([Things]));

    const badId = await answer(await fetch(`${base}/things/not-a-uuid?name=x`));
    const unknownField = await answer(
      await fetch(`${base}/things`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"count":1,"extra":true}' }),
    );

    expect(badId[0]).toBe(400);
    expect(JSON.stringify(badId[1])).toContain('id must be a UUID');
    expect(unknownField[0]).toBe(400);
    expect(JSON.stringify(unknownField[1])).toContain('property extra should not exist');
  });

  it('when a path parameter is empty, then Nest’s router answers it (not found), as it does for every route', async () => {
    let base: string;
    ({ app, base } = await appWith([Things]));

    expect((await fetch(`${base}/things//nothing`)).status).toBe(404);
    expect(await answer(await fetch(`${base}/things/${ID}/nothing`))).toEqual([200, '']);
  });

  it('when a route sets headers by decorator and on its reply (@Res passthrough), then Fastify runs it directly and the answer carries both', async () => {
    let base: string;
    ({ app, base } = await appWith([Things]));
    const headed = await fetch(`${base}/things/with/header`);

    expect([headed.status, headed.headers.get('x-from'), headed.headers.get('x-also'), await headed.json()]).toEqual([
      200,
      'decorator',
      'reply',
      { servedBy: 'direct' },
    ]);
  });

  it('when a handler sets its own status on its reply (@Res passthrough), then that status stands, as under Nest’s router (the route’s status is set before the handler only)', async () => {
    let base: string;
    ({ app, base } = await appWith([Things]));
    const moved = await fetch(`${base}/things/with/redirect`, { redirect: 'manual' });

    expect([moved.status, moved.headers.get('location')]).toEqual([302, '/elsewhere']);
  });

  it('when a route answers on its own reply (@Res), or any interceptor applies, then Nest’s router runs it as before', async () => {
    let base: string;
    ({ app, base } = await appWith([Things]));
    expect(await answer(await fetch(`${base}/things/with/reply`))).toEqual([200, { servedBy: 'nest' }]);
    await app.close();

    const seen: string[] = [];
    const interceptor: NestInterceptor = {
      intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
        seen.push(context.getHandler().name);
        return next.handle();
      },
    };
    ({ app, base } = await appWith([Things], (nest) => nest.useGlobalInterceptors(interceptor)));
    const read = await answer(await fetch(`${base}/things/${ID}?name=x`));

    expect([read[0], (read[1] as { servedBy: string }).servedBy, seen]).toEqual([200, 'nest', ['one']]);
  });
});
