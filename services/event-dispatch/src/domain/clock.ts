/** The time every rule of the service decides with; tests pass a fake one (no HTTP backdoor). */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();
