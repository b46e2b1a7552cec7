// Promise.withResolvers arrived in Node 22; the Restate SDK 1.17 calls it. Loaded with
// `node --import` before the service file (test/support/sdk-service.ts).
if (typeof Promise.withResolvers !== 'function') {
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value: function withResolvers() {
      let resolve;
      let reject;
      const promise = new this((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise, resolve, reject };
    },
  });
}
