import { Check, Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'customer_tenants' })
@Check('customer_tenants_linked_by_check', `"linked_by" IN ('created', 'linked')`)
export class CustomerTenantEntity {
  @PrimaryColumn({ name: 'customer_id', type: 'uuid' })
  customerId!: string;

  @Column({ type: 'varchar', length: 64 })
  tenant!: string;

  @Column({ name: 'linked_by', type: 'varchar', length: 16 })
  linkedBy!: 'created' | 'linked';

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;
}
