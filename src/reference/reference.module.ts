import { Module } from '@nestjs/common';
import { ReferenceController } from './reference.controller';

/** The partner-facing pages of docs/, served as HTML under /reference. */
@Module({ controllers: [ReferenceController] })
export class ReferenceModule {}
