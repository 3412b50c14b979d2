import { describe, it, expect } from "vitest"; describe("x",()=>{it("y",()=>{expect(1).toBe(1)})})
