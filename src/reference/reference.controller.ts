import { Controller, Get, Header, NotFoundException, Param, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Public } from '../auth/http/auth.decorators';
import { REFERENCE_PATH } from '../common/http/error-docs';
import { loadReferencePages, REFERENCE_PAGES, REFERENCE_STYLESHEET, type ReferencePageName } from './reference-pages';

/**
 * The reference pages a partner reads without the repository (docs/api-contract.md, "Docs that
 * open"): the error catalogue every `doc_url` points into, the field rules, the contract and its
 * versioning policy, the changelog. Public, as HTML, each rendered once at start.
 */
@ApiExcludeController()
@Public()
@Controller(REFERENCE_PATH.slice(1))
export class ReferenceController {
  private readonly pages = loadReferencePages();

  @Get()
  index(@Res() reply: FastifyReply): void {
    void reply.redirect(`${REFERENCE_PATH}/errors`, 302);
  }

  @Get('reference.css')
  @Header('content-type', 'text/css; charset=utf-8')
  @Header('cache-control', 'public, max-age=300')
  stylesheet(): string {
    return REFERENCE_STYLESHEET;
  }

  @Get(':page')
  @Header('content-type', 'text/html; charset=utf-8')
  @Header('cache-control', 'public, max-age=300')
  page(@Param('page') name: string): string {
    const page = Object.hasOwn(REFERENCE_PAGES, name) ? this.pages.get(name as ReferencePageName) : undefined;
    if (page === undefined) throw new NotFoundException();
    return page;
  }
}
