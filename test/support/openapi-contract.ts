import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

/** The parts of an OpenAPI 3.1 document an answer is checked against. */
interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
  parameters?: { name: string; in: string; required?: boolean; schema?: { type?: string } }[];
  requestBody?: { content: Record<string, { schema?: unknown }> };
  'x-additional-query-parameters'?: boolean;
}
interface Document {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
}

/** One answer that the document does not admit, and why. */
export interface Violation {
  readonly operation: string;
  readonly status: number;
  readonly problem: string;
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options']);

/**
 * Checks answers against an OpenAPI document with ajv (JSON Schema 2020-12, the dialect of OpenAPI
 * 3.1), a validator the gateway's own code does not use: is the status one the operation declares,
 * is the content type one it declares for that status, and does the body match that schema. What a
 * client validating against the document would refuse is a violation.
 */
export class OpenApiContract {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  private readonly templates: { method: string; template: string; pattern: RegExp }[] = [];
  readonly covered = new Set<string>();
  readonly violations: Violation[] = [];
  checked = 0;

  constructor(readonly document: Document) {
    addFormats(this.ajv);
    // `example` (and the x- extensions) are annotations in OpenAPI 3.1: not validation keywords.
    this.ajv.addKeyword('example');
    this.ajv.addSchema(document, 'openapi');
    for (const [template, operations] of Object.entries(document.paths)) {
      const pattern = new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`);
      for (const method of Object.keys(operations).filter((key) => METHODS.has(key))) this.templates.push({ method, template, pattern });
    }
  }

  static fromFile(path = join(process.cwd(), 'openapi.json')): OpenApiContract {
    return new OpenApiContract(JSON.parse(readFileSync(path, 'utf8')) as Document);
  }

  /** Every operation the document declares, as `GET /path/{param}`. */
  get operations(): string[] {
    return this.templates.map(({ method, template }) => `${method.toUpperCase()} ${template}`);
  }

  /** Checks one answer to `method path` (the path as sent, its query aside). */
  check(method: string, path: string, status: number, contentType: string | null, body: string): void {
    const bare = path.split('?')[0];
    const found = this.templateOf(method, bare);
    const operation = found ? `${method.toUpperCase()} ${found.template}` : `${method.toUpperCase()} ${bare}`;
    this.checked += 1;
    if (!found) return void this.violations.push({ operation, status, problem: 'no such operation in the document' });
    this.covered.add(operation);
    const responses = this.document.paths[found.template][found.method].responses;
    const declared = String(status) in responses ? String(status) : 'default' in responses ? 'default' : undefined;
    if (!declared) return void this.violations.push({ operation, status, problem: `status ${status} is not declared (${Object.keys(responses).join(', ')})` });
    const content = responses[declared].content;
    if (!content) {
      if (body.length > 0 && status !== 302) this.violations.push({ operation, status, problem: 'a body where the document declares none' });
      return;
    }
    const mediaType = (contentType ?? '').split(';')[0].trim().toLowerCase();
    if (!(mediaType in content))
      return void this.violations.push({ operation, status, problem: `content type '${mediaType}' is not declared (${Object.keys(content).join(', ')})` });
    if (content[mediaType].schema === undefined || !mediaType.endsWith('json')) return;
    const validate = this.schemaAt('paths', found.template, found.method, 'responses', declared, 'content', mediaType, 'schema');
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch {
      return void this.violations.push({ operation, status, problem: 'the body is not JSON' });
    }
    if (!validate(value)) {
      const problems = (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message ?? ''}`).join('; ');
      this.violations.push({ operation, status, problem: problems });
    }
  }

  /** The operation `method bare` is an instance of (`bare`: a path as sent, without its query). */
  private templateOf(method: string, bare: string) {
    return this.templates.find((candidate) => candidate.method === method.toLowerCase() && candidate.pattern.test(bare));
  }

  /** The validator of the schema at this JSON pointer of the document. */
  private schemaAt(...parts: string[]) {
    const pointer = parts.map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
    return this.ajv.getSchema(`openapi#/${pointer}`)!;
  }

  /**
   * What a client validating its request against the document finds wrong with it (none: the
   * document admits it): each query parameter named, of its schema (a number where the schema
   * says integer or number, as a generated client sends one), the required ones present, and the
   * JSON body of the schema.
   */
  requestProblems(method: string, pathAndQuery: string, body?: unknown, headers: Record<string, string> = {}): string[] {
    const [bare, query = ''] = pathAndQuery.split('?');
    const found = this.templateOf(method, bare);
    if (!found) return ['no such operation in the document'];
    const operation = this.document.paths[found.template][found.method];
    const problems: string[] = [];
    const parameters = (operation.parameters ?? []).map((parameter, index) => ({ parameter, index })).filter(({ parameter }) => parameter.in === 'query');
    const sent = new URLSearchParams(query);
    for (const name of new Set(sent.keys())) {
      const declared = parameters.find(({ parameter }) => parameter.name === name);
      if (!declared) {
        if (operation['x-additional-query-parameters'] === false) problems.push(`${name} is not a query parameter`);
        continue;
      }
      const text = sent.get(name)!;
      const numeric = ['integer', 'number'].includes(declared.parameter.schema?.type ?? '') && /^-?\d+(\.\d+)?$/.test(text);
      const validate = this.schemaAt('paths', found.template, found.method, 'parameters', String(declared.index), 'schema');
      if (!validate(numeric ? Number(text) : text)) problems.push(`${name} ${validate.errors?.[0]?.message ?? ''}`);
    }
    for (const { parameter } of parameters) if (parameter.required && !sent.has(parameter.name)) problems.push(`${parameter.name} is required`);
    (operation.parameters ?? []).forEach((parameter, index) => {
      if (parameter.in !== 'header') return;
      const value = Object.entries(headers).find(([name]) => name.toLowerCase() === parameter.name.toLowerCase())?.[1];
      const validate = this.schemaAt('paths', found.template, found.method, 'parameters', String(index), 'schema');
      if (value !== undefined && !validate(value)) problems.push(`${parameter.name} ${validate.errors?.[0]?.message ?? ''}`);
    });
    if (body !== undefined) {
      const validate = this.schemaAt('paths', found.template, found.method, 'requestBody', 'content', 'application/json', 'schema');
      if (!validate(body)) problems.push(...(validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message ?? ''}`));
    }
    return problems;
  }

  /** fetch, with the answer checked (and given back, its body read as text). */
  async fetch(url: string, init: RequestInit = {}): Promise<{ status: number; headers: Headers; text: string; json: <T = Record<string, any>>() => T }> {
    const response = await fetch(url, { redirect: 'manual', ...init });
    const text = await response.text();
    this.check(init.method ?? 'GET', new URL(url).pathname, response.status, response.headers.get('content-type'), text);
    return { status: response.status, headers: response.headers, text, json: <T>() => JSON.parse(text) as T };
  }

  /** The figures: operations covered of those declared, answers checked, violations. */
  summary(): string {
    return `${this.covered.size} of ${this.operations.length} operations, ${this.checked} answers checked, ${this.violations.length} violations`;
  }
}
