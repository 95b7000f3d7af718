import { textProblem, toDecimalInteger } from './field-rules';

describe(textProblem.name, () => {
  it.each(['Ada', 'Zoë', 'José-María', "O'Brien", '王小明', 'Nguyễn', '10115', 'A'.repeat(100)])('when the text is %j, then it is accepted', (text) => {
    expect(textProblem(text, 100)).toBeUndefined();
  });

  it.each([
    ['', 'must contain a letter or a digit'],
    ['   ', 'must not start or end with white space'],
    ['😀', 'must contain a letter or a digit'],
    ['\u200b\u200b', 'must contain a letter or a digit'],
    ['A\u0000da', 'must not contain control characters'],
    ['Ada\nLovelace', 'must not contain control characters'],
    ['Ada\u2028', 'must not contain control characters'],
    ['Ada\u0085', 'must not contain control characters'],
    ['A\ud800da', 'must not contain control characters'],
    [' Ada', 'must not start or end with white space'],
    ['A'.repeat(101), 'must be at most 100 characters (UTF-16 code units; an emoji counts as two)'],
    ['A' + '😀'.repeat(50), 'must be at most 100 characters (UTF-16 code units; an emoji counts as two)'],
    [42, 'must be a string'],
  ])('when the text is %j, then it is refused: %s', (text, problem) => {
    expect(textProblem(text, 100)).toBe(problem);
  });
});

describe(toDecimalInteger.name, () => {
  it.each([
    ['16', 16],
    ['0', 0],
    ['0x10', '0x10'],
    ['1e3', '1e3'],
    ['16abc', '16abc'],
    [' 16', ' 16'],
    ['-1', '-1'],
    ['1.5', '1.5'],
  ])('when the query value is %j, then it becomes %j', (value, expected) => {
    expect(toDecimalInteger({ value })).toBe(expected);
  });
});
