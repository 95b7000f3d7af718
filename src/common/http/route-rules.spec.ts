import { Controller, Get, Module, Param, Type } from '@nestjs/common';
import { DiscoveryModule, NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { addRouteHook, installRouteRules, RouteRule } from './route-rules';

/** A rule every route gets: a preHandler that answers 403 itself, so a route that carries it never reaches its handler. */
const refuseAll: RouteRule<true> = {
  key: 'refuse',
  read: () => true,
  attach: (route) =>
    addRouteHook(route, 'preHandler', (_request, reply, done) => {
      void reply.code(403).send({ refused: true });
      done();
    }),
};

async function appWith(controllers: Type<unknown>[]): Promise<NestFastifyApplication> {
  @Module({ imports: [DiscoveryModule], controllers })
  class TestModule {}
  return NestFactory.create<NestFastifyApplication>(TestModule, new FastifyAdapter(), { logger: false });
}

/** Starts the application on a free loopback port; its base URL. */
async function listening(app: NestFastifyApplication): Promise<string> {
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  return `http://127.0.0.1:${address.port}`;
}

describe('installRouteRules', () => {
  let app: NestFastifyApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('when a route is registered, with or without a path parameter, then it carries every rule before its handler runs', async () => {
    @Controller('plain')
    class Plain {
      @Get()
      read() {
        return { served: true };
      }

      @Get(':id')
      one(@Param('id') id: string) {
        return { served: id };
      }
    }
    app = await appWith([Plain]);
    installRouteRules(app, app.getHttpAdapter().getInstance(), [refuseAll]);
    const base = await listening(app);

    const answers = await Promise.all(['/plain', '/plain/x'].map(async (path) => await fetch(`${base}${path}`)));
    const head = await fetch(`${base}/plain`, { method: 'HEAD' });

    expect(await Promise.all(answers.map(async (answer) => [answer.status, await answer.json()]))).toEqual([
      [403, { refused: true }],
      [403, { refused: true }],
    ]);
    expect(head.status).toBe(403);
  });

  it('when a controller replaces a route method on its instance (bound in its constructor), then the route still carries the rule', async () => {
    @Controller('bound')
    class Bound {
      constructor() {
        this.read = this.read.bind(this);
      }

      @Get()
      read() {
        return { served: true };
      }
    }
    app = await appWith([Bound]);
    installRouteRules(app, app.getHttpAdapter().getInstance(), [refuseAll]);
    const base = await listening(app);

    expect((await fetch(`${base}/bound`)).status).toBe(403);
  });

  it('when two controllers share one handler function (a method both inherit), then the start is refused, naming both', async () => {
    class Base {
      @Get()
      read() {
        return { served: true };
      }
    }
    @Controller('a')
    class First extends Base {}
    @Controller('b')
    class Second extends Base {}
    app = await appWith([First, Second]);

    expect(() => installRouteRules(app!, app!.getHttpAdapter().getInstance(), [refuseAll])).toThrow(
      /(First|Second)\.read and (First|Second)\.read share one handler function/,
    );
  });
});
