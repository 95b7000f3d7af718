import 'reflect-metadata';
import { runAsProcess } from '../../database/cli/command-line';
import { runAuditVerify } from './audit-verify.command';

runAsProcess('audit:verify', runAuditVerify);
