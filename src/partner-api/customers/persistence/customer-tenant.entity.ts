import { Check, Column, Entity, Index, PrimaryColumn } from 'typeorm';

@Entity({ name: 'customer_tenants' })
@Index('customer_tenants_listing_idx', { synchronize: false })
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

  /** The reference it was created with (null: linked, or created before references were kept). */
  @Column({ type: 'uuid', nullable: true })
  reference!: string | null;

  /** The country the partner sent: the one field of the customer's the service keeps (docs/security.md). */
  @Column({ type: 'char', length: 2, nullable: true })
  country!: string | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;
}
