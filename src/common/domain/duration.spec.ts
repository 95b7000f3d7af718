import { formatDuration, parseDuration } from './duration';

describe('durations on the command line and in queries', () => {
  it('when a number has a unit, then it is read in that unit; a bare number is seconds', () => {
    expect(['90s', '5m', '2h', '30d', '60', '0s'].map(parseDuration)).toEqual([90_000, 300_000, 7_200_000, 2_592_000_000, 60_000, 0]);
  });

  it('when the text is not a duration, then undefined', () => {
    expect(['', 'soon', '-5m', '1.5h', '5 m', '5w', '12345678s'].map(parseDuration)).toEqual(Array(7).fill(undefined));
  });

  it('when a duration is printed, then in its largest whole unit', () => {
    expect([60_000, 2_592_000_000, 90_000, 7_200_000, 0].map(formatDuration)).toEqual(['1m', '30d', '90s', '2h', '0s']);
  });
});
