// A ticking "now" for countdowns. Create it while a component initialises:
// its timer lives exactly as long as that component.

export class Clock {
  now = $state(Date.now());

  constructor(intervalMs = 1000) {
    $effect(() => {
      const timer = setInterval(() => (this.now = Date.now()), intervalMs);
      return () => clearInterval(timer);
    });
  }
}
