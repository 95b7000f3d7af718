import 'reflect-metadata';
import { runAsProcess } from '../../database/cli/command-line';
import { runAuditReconcile } from './audit-reconcile.command';

runAsProcess('audit:reconcile', runAuditReconcile);
