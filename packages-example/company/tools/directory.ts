import { tool } from "lllm";

const FIRST = ["Ada", "Brian", "Chen", "Dana", "Emil", "Fatima", "Goran", "Hana", "Ivan", "Julia"];
const LAST = ["Lovelace", "Kernighan", "Wei", "Scully", "Novak"];
const DEPARTMENTS = ["Engineering", "Sales", "Marketing", "Support", "Finance"];

/** 50 employees, always the same, so the answer can be checked by hand. */
const employees = Array.from({ length: 50 }, (_, index) => ({
  name: `${FIRST[index % FIRST.length]} ${LAST[Math.floor(index / FIRST.length)]}`,
  department: DEPARTMENTS[(index * 7) % DEPARTMENTS.length]!,
  salary: 60_000 + ((index * 7919) % 90_001),
}));

/** Seed 002's two tools: the names, then one lookup per employee. A program calls them in a loop. */
export const listEmployees = tool({
  name: "list_employees",
  description: "Return a list of every employee name.",
  run: () => employees.map((employee) => employee.name),
});

export const getEmployee = tool({
  name: "get_employee",
  description: "Return {name, department, salary} for an employee.",
  parameters: { name: { type: "string", description: "The employee's full name" } },
  run: ({ name }) => {
    const found = employees.find((employee) => employee.name === name);
    if (!found) throw new Error(`no employee named ${JSON.stringify(name)}`);
    return found;
  },
});
