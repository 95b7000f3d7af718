/** The one source of "now", so rules that depend on the date can be tested on any date. */
export abstract class Clock {
  abstract now(): Date;
}

export class SystemClock extends Clock {
  now(): Date {
    return new Date();
  }
}
