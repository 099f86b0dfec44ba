/**
 * The time a service's rules decide with. Every service takes one (`systemClock` in production);
 * tests pass a fake one instead of an HTTP backdoor or a mocked global.
 */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();
