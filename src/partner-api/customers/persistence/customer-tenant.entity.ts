import { Check, Column, Entity, Index, PrimaryColumn } from 'typeorm';

@Entity({ name: 'customer_tenants' })
@Index('customer_tenants_end_user_idx', ['tenant', 'endUser'], { where: 'end_user IS NOT NULL' })
@Check('customer_tenants_linked_by_check', `"linked_by" IN ('created', 'linked')`)
export class CustomerTenantEntity {
  @PrimaryColumn({ name: 'customer_id', type: 'uuid' })
  customerId!: string;

  @Column({ type: 'varchar', length: 64 })
  tenant!: string;

  @Column({ name: 'linked_by', type: 'varchar', length: 16 })
  linkedBy!: 'created' | 'linked';

  /** The end user's pseudonym; null: the tenant's partner servers only. */
  @Column({ name: 'end_user', type: 'uuid', nullable: true })
  endUser!: string | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;
}
