console.log("demo: coming soon");
