import { Check, Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

@Entity({ name: 'api_clients' })
@Check('api_clients_role_check', `"role" IN ('partner', 'admin')`)
@Check('api_clients_api_version_check', `"api_version" ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'`)
@Index('api_clients_active_name_key', ['name'], { unique: true, where: 'revoked_at IS NULL' })
export class ApiClientEntity {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ type: 'varchar', length: 100 })
  name!: string;

  @Column({ type: 'varchar', length: 16 })
  role!: 'partner' | 'admin';

  @Column({ type: 'varchar', length: 64 })
  tenant!: string;

  /** SHA-256 of the token, hex. The token itself is never stored. */
  @Index('api_clients_token_hash_key', { unique: true })
  @Column({ name: 'token_hash', type: 'char', length: 64 })
  tokenHash!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt!: Date | null;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt!: Date | null;

  /** The API version its requests are answered under when they name none (docs/api-contract.md, "Versions"). */
  @Column({ name: 'api_version', type: 'varchar', length: 10, default: '2026-12-01' })
  apiVersion!: string;
}
