/** Does nothing: a listener for events and rejections whose value does not matter. */
export function ignore(): void {}
