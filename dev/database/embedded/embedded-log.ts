/** Where the embedded PostgreSQL's start-up speaks (the service's logger, or a CLI's stderr). */
export interface EmbeddedLog {
  info(message: string): void;
  warn(message: string): void;
  debug(message: string): void;
}
