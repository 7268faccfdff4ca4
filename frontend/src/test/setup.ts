import { afterEach } from 'vitest';

// Each test installs its own fake bridge; none may leak into the next.
afterEach(() => {
  delete window.go;
  delete window.runtime;
});
