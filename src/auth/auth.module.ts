import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { PostgresNotifications } from '../database/postgres-notifications';
import { ApiClientChanges } from './domain/api-client-changes.port';
import { ApiClientStore } from './domain/api-client-store.port';
import { ApiClientsService } from './domain/api-clients.service';
import { CallerIdentity } from '../common/http/caller-identity.port';
import { BearerAuthGuard, BearerCallerIdentity } from './http/bearer-auth.guard';
import { ClientsController } from './http/clients.controller';
import { ApiClientEntity } from './persistence/api-client.entity';
import { PostgresApiClientChanges } from './persistence/postgres-api-client-changes';
import { TypeOrmApiClientRepository } from './persistence/typeorm-api-client.repository';

@Module({
  imports: [TypeOrmModule.forFeature([ApiClientEntity])],
  controllers: [ClientsController],
  providers: [
    ApiClientsService,
    TypeOrmApiClientRepository,
    { provide: ApiClientStore, useExisting: TypeOrmApiClientRepository },
    {
      provide: ApiClientChanges,
      inject: [PostgresNotifications],
      useFactory: (notifications: PostgresNotifications) => new PostgresApiClientChanges(notifications),
    },
    BearerAuthGuard,
    { provide: CallerIdentity, useClass: BearerCallerIdentity },
  ],
  exports: [ApiClientsService, BearerAuthGuard, CallerIdentity],
})
export class AuthModule {}
